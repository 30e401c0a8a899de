import { Embed } from './app/Embed';
import { mount } from './app/mount';

mount(<Embed />);
